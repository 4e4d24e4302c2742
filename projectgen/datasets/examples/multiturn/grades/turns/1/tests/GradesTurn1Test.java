import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

public class GradesTurn1Test {

    @Test
    public void ninetyAndAboveIsAnA() {
        assertThat(Grades.letter(90)).isEqualTo("A");
        assertThat(Grades.letter(100)).isEqualTo("A");
    }

    @Test
    public void theBandsBetween() {
        assertThat(Grades.letter(89)).isEqualTo("B");
        assertThat(Grades.letter(80)).isEqualTo("B");
        assertThat(Grades.letter(75)).isEqualTo("C");
    }

    @Test
    public void belowSeventyIsAnF() {
        assertThat(Grades.letter(69)).isEqualTo("F");
        assertThat(Grades.letter(0)).isEqualTo("F");
    }
}
